from pathlib import Path

print(len(list(Path('.').glob('*.md'))))
