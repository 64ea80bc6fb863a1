package protocol_test

import (
	"bytes"
	"fmt"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A connection's loop: read a frame, parse its header, answer.
func Example() {
	// What a client sends: an ApiVersions v3 request.
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(3)
	conn := bytes.NewBuffer(kmsg.NewRequestFormatter(kmsg.FormatterClientID("demo")).AppendRequest(nil, req, 1))

	frame, err := protocol.ReadFrame(conn, protocol.DefaultMaxRequestBytes)
	if err != nil {
		panic(err) // a real server closes the connection
	}
	hdr, body, err := protocol.ParseRequestHeader(frame)
	if err != nil {
		panic(err)
	}
	if r, ok := protocol.Lookup(hdr.APIKey); ok {
		fmt.Printf("%s v%d from %q, served v%d-%d, %d body bytes\n", r.Name(), hdr.APIVersion, hdr.ClientID, r.Min, r.Max, len(body))
	}
	resp := protocol.ApiVersionsResponse(hdr.APIVersion)
	out := protocol.AppendResponse(nil, hdr, resp)
	fmt.Println("response frame bytes:", len(out) > 8)
	// Output:
	// ApiVersions v3 from "demo", served v0-5, 3 body bytes
	// response frame bytes: true
}

// The Produce path for one partition's records field.
func ExampleNextBatch() {
	records, _ := protocol.BuildBatch(protocol.BatchHeader{ProducerID: -1, BaseSequence: -1},
		protocol.CodecLZ4, []protocol.Record{{Value: []byte("a")}, {Value: []byte("b")}})

	batch, rest, err := protocol.NextBatch(records)
	if err == nil {
		err = protocol.VerifyCRC(batch)
	}
	if err == nil {
		err = protocol.ValidateRecords(batch)
	}
	if err != nil {
		fmt.Println(err) // the server maps it to CORRUPT_MESSAGE, INVALID_RECORD, ...
		return
	}
	// The leader assigns offsets and stamps its epoch; the CRC stays valid.
	protocol.SetBaseOffset(batch, 100)
	protocol.SetPartitionLeaderEpoch(batch, 3)
	h, _ := protocol.ParseBatchHeader(batch)
	fmt.Println(h.BaseOffset, h.LastOffset(), h.PartitionLeaderEpoch, h.Compression(), len(rest), protocol.VerifyCRC(batch))
	// Output: 100 101 3 lz4 0 <nil>
}
