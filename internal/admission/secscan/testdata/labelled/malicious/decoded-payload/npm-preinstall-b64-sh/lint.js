console.log('ok');
