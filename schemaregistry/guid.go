package schemaregistry

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"

	"github.com/fakekafka/fakekafka/schemaregistry/schema"
)

// guidOf is a schema's GUID as Confluent computes it (Schema.updateHash,
// MD5): the MD5 of the schema text then of each reference's name,
// subject and big-endian version, written as a UUID.
func guidOf(text string, refs []schema.Reference) string {
	h := md5.New()
	h.Write([]byte(text))
	for _, r := range refs {
		h.Write([]byte(r.Name))
		h.Write([]byte(r.Subject))
		h.Write(binary.BigEndian.AppendUint32(nil, uint32(r.Version)))
	}
	s := hex.EncodeToString(h.Sum(nil))
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

// GUID is the version's schema GUID (Confluent's "guid").
func (v SubjectVersion) GUID() string { return guidOf(v.Schema, v.References) }
