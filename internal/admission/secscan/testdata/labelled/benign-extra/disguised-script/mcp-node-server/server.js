const fs = require('fs');
console.log(fs.readdirSync('.').length);
