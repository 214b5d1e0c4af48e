#!/bin/sh
for i in $(seq 1 30); do
  if nc -z -w 1 localhost 5432; then echo 'postgres is up'; exit 0; fi
  sleep 1
done
echo 'postgres did not start' >&2
exit 1
