const s = String.fromCharCode(104,101,108,108,111,32,119,111,114,108,100,33,33,33,33,33,33);
eval(atob("Y29uc29sZS5sb2coMSk="));
