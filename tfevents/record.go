package tfevents

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskDelta is the constant added to a rotated CRC by MaskedCRC.
const maskDelta = 0xa282ead8

// CRC32C is the CRC-32C (Castagnoli) of b.
func CRC32C(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Mask is TFRecord's masking of a CRC: rotated right by 15 bits, plus
// 0xa282ead8.
func Mask(crc uint32) uint32 { return (crc>>15 | crc<<17) + maskDelta }

// Unmask inverts Mask.
func Unmask(m uint32) uint32 {
	r := m - maskDelta
	return r>>17 | r<<15
}

// MaskedCRC is Mask(CRC32C(b)), the checksum a TFRecord stores.
func MaskedCRC(b []byte) uint32 { return Mask(CRC32C(b)) }

// AppendRecord appends the TFRecord framing of data to b: its length as
// a little-endian uint64, the length's masked CRC, data, data's masked
// CRC.
func AppendRecord(b, data []byte) []byte {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(data)))
	b = append(b, n[:]...)
	b = binary.LittleEndian.AppendUint32(b, MaskedCRC(n[:]))
	b = append(b, data...)
	return binary.LittleEndian.AppendUint32(b, MaskedCRC(data))
}

// ErrTorn matches (errors.Is) ReadRecord's error for a record cut short
// at the end of its input: what a crash during a write leaves.
var ErrTorn = errors.New("tfevents: torn record at the end of the file")

// tornError is a torn record's error; it matches ErrTorn.
type tornError struct{ got, want int }

func (e *tornError) Error() string {
	return fmt.Sprintf("tfevents: torn record at the end of the file (%d of its %d bytes)", e.got, e.want)
}

func (e *tornError) Is(target error) bool { return target == ErrTorn }

// maxRecord bounds a record's length (a corrupt length is refused
// before it is allocated).
const maxRecord = 1 << 30

// ReadRecord reads one TFRecord from r and returns its data, after
// checking both checksums. At the end of r it returns io.EOF; a record
// cut short returns an error wrapping ErrTorn, and a checksum that does
// not match an error naming both values.
func ReadRecord(r io.Reader) ([]byte, error) {
	var head [12]byte
	if n, err := io.ReadFull(r, head[:]); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, &tornError{n, 12}
	}
	length := binary.LittleEndian.Uint64(head[:8])
	if got, want := binary.LittleEndian.Uint32(head[8:]), MaskedCRC(head[:8]); got != want {
		return nil, fmt.Errorf("tfevents: record length %d has masked CRC %#08x, want %#08x: the file is corrupt", length, got, want)
	}
	if length > maxRecord {
		return nil, fmt.Errorf("tfevents: record length %d exceeds %d: the file is corrupt", length, maxRecord)
	}
	data := make([]byte, length+4)
	if n, err := io.ReadFull(r, data); err != nil {
		return nil, &tornError{12 + n, 12 + len(data)}
	}
	body := data[:length]
	if got, want := binary.LittleEndian.Uint32(data[length:]), MaskedCRC(body); got != want {
		return nil, fmt.Errorf("tfevents: record of %d bytes has masked CRC %#08x, want %#08x: the file is corrupt", length, got, want)
	}
	return body, nil
}
