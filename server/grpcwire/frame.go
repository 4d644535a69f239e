package grpcwire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// HTTP/2 frame types and flags (RFC 9113 §6) this server reads or writes.
const (
	frameData         = 0x0
	frameHeaders      = 0x1
	framePriority     = 0x2
	frameRSTStream    = 0x3
	frameSettings     = 0x4
	framePushPromise  = 0x5
	framePing         = 0x6
	frameGoAway       = 0x7
	frameWindowUpdate = 0x8
	frameContinuation = 0x9

	flagEndStream  = 0x1
	flagAck        = 0x1
	flagEndHeaders = 0x4
	flagPadded     = 0x8
	flagPriority   = 0x20
)

// Settings identifiers (RFC 9113 §6.5.2).
const (
	settingHeaderTableSize   = 0x1
	settingEnablePush        = 0x2
	settingInitialWindowSize = 0x4
	settingMaxFrameSize      = 0x5
	settingMaxHeaderListSize = 0x6
)

// Error codes (RFC 9113 §7).
const (
	errCodeNo              = 0x0
	errCodeProtocol        = 0x1
	errCodeFlowControl     = 0x3
	errCodeFrameSize       = 0x6
	errCodeRefusedStream   = 0x7
	errCodeEnhanceYourCalm = 0xb
	defaultWindow          = 65535
	defaultMaxFrame        = 16384
	maxAllowedFrame        = 1<<24 - 1
	frameHeaderLen         = 9
	clientPreface          = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	maxWindow              = 1<<31 - 1
	grpcMsgHeaderLen       = 5
	defaultHeaderTableSize = 4096
	maxHeaderListBytes     = 64 << 10
	maxPingStrikes         = 2
)

// frameHeader is the 9-byte header of a frame.
type frameHeader struct {
	length   uint32
	typ      byte
	flags    byte
	streamID uint32
}

func parseFrameHeader(b []byte) frameHeader {
	return frameHeader{
		length:   uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]),
		typ:      b[3],
		flags:    b[4],
		streamID: binary.BigEndian.Uint32(b[5:9]) & (1<<31 - 1),
	}
}

// appendFrameHeader appends a frame header.
func appendFrameHeader(b []byte, length int, typ, flags byte, streamID uint32) []byte {
	return append(b, byte(length>>16), byte(length>>8), byte(length), typ, flags,
		byte(streamID>>24), byte(streamID>>16), byte(streamID>>8), byte(streamID))
}

func appendSettings(b []byte, settings ...[2]uint32) []byte {
	b = appendFrameHeader(b, 6*len(settings), frameSettings, 0, 0)
	for _, s := range settings {
		b = binary.BigEndian.AppendUint16(b, uint16(s[0]))
		b = binary.BigEndian.AppendUint32(b, s[1])
	}
	return b
}

func appendWindowUpdate(b []byte, streamID, incr uint32) []byte {
	b = appendFrameHeader(b, 4, frameWindowUpdate, 0, streamID)
	return binary.BigEndian.AppendUint32(b, incr)
}

func appendRSTStream(b []byte, streamID, code uint32) []byte {
	b = appendFrameHeader(b, 4, frameRSTStream, 0, streamID)
	return binary.BigEndian.AppendUint32(b, code)
}

func appendPing(b []byte, ack bool, data [8]byte) []byte {
	var flags byte
	if ack {
		flags = flagAck
	}
	b = appendFrameHeader(b, 8, framePing, flags, 0)
	return append(b, data[:]...)
}

func appendGoAway(b []byte, lastStream, code uint32, debug string) []byte {
	b = appendFrameHeader(b, 8+len(debug), frameGoAway, 0, 0)
	b = binary.BigEndian.AppendUint32(b, lastStream)
	b = binary.BigEndian.AppendUint32(b, code)
	return append(b, debug...)
}

// appendHeaders appends a header block (HEADERS, then CONTINUATION frames
// if it is longer than maxFrame).
func appendHeaders(b []byte, streamID uint32, block []byte, maxFrame int, end bool) []byte {
	typ := byte(frameHeaders)
	var flags byte
	if end {
		flags = flagEndStream
	}
	for {
		n := min(len(block), maxFrame)
		f := flags
		if n == len(block) {
			f |= flagEndHeaders
		}
		b = appendFrameHeader(b, n, typ, f, streamID)
		b = append(b, block[:n]...)
		block = block[n:]
		if len(block) == 0 {
			return b
		}
		typ, flags = frameContinuation, 0
	}
}

// connError ends a connection with a GOAWAY of its code.
type connError struct {
	code uint32
	msg  string
}

func (e *connError) Error() string {
	return fmt.Sprintf("grpcwire: connection error %d: %s", e.code, e.msg)
}

func protocolError(format string, args ...any) error {
	return &connError{code: errCodeProtocol, msg: fmt.Sprintf(format, args...)}
}

// stripPadding removes a padded frame's pad length byte and padding.
func stripPadding(h frameHeader, p []byte) ([]byte, error) {
	if h.flags&flagPadded == 0 {
		return p, nil
	}
	if len(p) < 1 {
		return nil, protocolError("padded frame too short")
	}
	pad := int(p[0])
	p = p[1:]
	if pad > len(p) {
		return nil, protocolError("padding longer than the frame")
	}
	return p[:len(p)-pad], nil
}

var errClosed = errors.New("grpcwire: connection closed")
