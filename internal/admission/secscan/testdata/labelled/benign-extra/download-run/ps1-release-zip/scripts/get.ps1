$ErrorActionPreference = 'Stop'
$rel = Invoke-RestMethod -Uri 'https://api.github.com/repos/example/tool/releases/latest'
Write-Host "Latest: $($rel.tag_name)"
Invoke-WebRequest -Uri $rel.assets[0].browser_download_url -OutFile tool.zip
$hash = (Get-FileHash tool.zip -Algorithm SHA256).Hash
if ($hash -ne $env:TOOL_SHA256) { throw 'checksum mismatch' }
Expand-Archive tool.zip -DestinationPath "$env:LOCALAPPDATA\tool" -Force
& "$env:LOCALAPPDATA\tool\tool.exe" --version
