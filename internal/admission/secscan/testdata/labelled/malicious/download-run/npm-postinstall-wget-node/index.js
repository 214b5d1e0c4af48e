module.exports = (rows) => rows.map((r) => '| ' + r.join(' | ') + ' |').join('\n');
