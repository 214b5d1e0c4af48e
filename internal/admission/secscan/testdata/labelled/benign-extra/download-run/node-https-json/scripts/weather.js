const https = require('https');
const { execFile } = require('child_process');
https.get('https://api.example.invalid/weather', (res) => {
  let body = '';
  res.on('data', (c) => { body += c; });
  res.on('end', () => {
    const w = JSON.parse(body);
    console.log(String.fromCharCode(0x2600), w.summary);
    execFile('notify-send', ['Weather', 'updated']);
  });
});
