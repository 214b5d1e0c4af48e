//go:build amd64 && !purego

#include "textflag.h"

// func plainRun(b []byte) (n int, escaped bool)
//
// The plain stretch of a JSON string's body: see plainRunGeneric, which
// gives the same answers with plainGroup 8. Registers: SI the data, CX its
// length, AX the position, R8 escaped, R9 the escapes table, X1..X3 the
// bytes compared against.
TEXT ·plainRun(SB), NOSPLIT, $0-33
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	XORQ AX, AX
	XORQ R8, R8
	LEAQ ·escapes(SB), R9
	MOVQ $0x2222222222222222, DX // '"'
	MOVQ DX, X1
	PUNPCKLQDQ X1, X1
	MOVQ $0x5c5c5c5c5c5c5c5c, DX // '\\'
	MOVQ DX, X2
	PUNPCKLQDQ X2, X2
	MOVQ $0x1f1f1f1f1f1f1f1f, DX // the largest control character
	MOVQ DX, X3
	PUNPCKLQDQ X3, X3

loop32:
	LEAQ 32(AX), DX
	CMPQ DX, CX
	JA   loop16
	MOVOU (SI)(AX*1), X0
	MOVOU 16(SI)(AX*1), X6
	MOVO  X0, X4
	PCMPEQB X1, X4      // '"'
	MOVO  X0, X5
	PCMPEQB X2, X5      // '\\'
	POR   X5, X4
	PMAXUB X3, X0
	PCMPEQB X3, X0      // max(c, 0x1f) == 0x1f: c is a control character
	POR   X0, X4
	MOVO  X6, X7
	PCMPEQB X1, X7
	MOVO  X6, X5
	PCMPEQB X2, X5
	POR   X5, X7
	PMAXUB X3, X6
	PCMPEQB X3, X6
	POR   X6, X7
	PMOVMSKB X4, DX
	PMOVMSKB X7, BX
	SHLQ  $16, BX
	ORQ   BX, DX
	TESTQ DX, DX
	JNZ   found
	ADDQ  $32, AX
	JMP   loop32

loop16:
	LEAQ 16(AX), DX
	CMPQ DX, CX
	JA   done
	MOVOU (SI)(AX*1), X0
	MOVO  X0, X4
	PCMPEQB X1, X4
	MOVO  X0, X5
	PCMPEQB X2, X5
	POR   X5, X4
	PMAXUB X3, X0
	PCMPEQB X3, X0
	POR   X0, X4
	PMOVMSKB X4, DX
	TESTQ DX, DX
	JNZ   found
	ADDQ  $16, AX

done:
	MOVQ AX, n+24(FP)
	MOVB R8, escaped+32(FP)
	RET

found:
	BSFQ DX, DX
	ADDQ DX, AX
	MOVBQZX (SI)(AX*1), DX
	CMPQ DX, $0x5c
	JNE  done           // '"' or a control character
	LEAQ 1(AX), DX
	CMPQ DX, CX
	JAE  done           // a backslash at the end
	MOVBQZX (SI)(DX*1), DX
	MOVBQZX (R9)(DX*1), DX
	CMPQ DX, $1
	JNE  done           // \u, or not an escape: the caller decides
	MOVQ $1, R8
	ADDQ $2, AX
	JMP  loop32
