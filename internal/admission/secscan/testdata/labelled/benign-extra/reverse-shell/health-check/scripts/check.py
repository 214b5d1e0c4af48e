import socket

with socket.create_connection(('127.0.0.1', 8080), timeout=2) as s:
    print('port 8080 is open')
