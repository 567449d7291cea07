// Package safetensors reads and writes the safetensors file format
// (https://github.com/huggingface/safetensors): an 8-byte little-endian
// header length, a JSON header mapping tensor names to dtype, shape and byte
// offsets (plus an optional "__metadata__" string map), then the raw
// little-endian tensor bytes. Files written here load with Python's
// safetensors.torch.load_file / safetensors.numpy.load_file.
package safetensors
