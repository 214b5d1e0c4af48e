const fs = require('fs');

const ICONS = {
  check: 'PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxNiAxNiI+PHBhdGggZD0iTTYgMTFMMyA4bDEtMSAyIDIgNS01IDEgMXoiLz48L3N2Zz4=',
  dot: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
};

for (const [name, b64] of Object.entries(ICONS)) {
  fs.writeFileSync(`${name}.${name === 'dot' ? 'png' : 'svg'}`, Buffer.from(b64, 'base64'));
}
