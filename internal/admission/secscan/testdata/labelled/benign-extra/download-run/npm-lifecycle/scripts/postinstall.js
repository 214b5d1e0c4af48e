const fs = require('fs');
fs.mkdirSync('.cache', { recursive: true });
console.log('ts-tool ready');
