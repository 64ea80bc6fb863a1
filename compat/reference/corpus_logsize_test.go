package reference

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// logSizeCases compare a partition's size after DeleteRecords: Kafka only
// moves the log start, and its segment files keep the records below it
// until a retention check deletes the segments wholly below it (none
// runs during the suite: KafkaSettings' log.initial.task.delay.ms), so
// the size stays.
func logSizeCases(latest func(kmsg.Key) int16) []corpusCase {
	ld := latest(kmsg.DescribeLogDirs)
	return []corpusCase{
		{name: "DescribeLogDirs/after-delete-records", settle: func(r *run, _ *corpusEnv) {
			r.create("sized", nil)
			r.waitISR("sized", 1, 2, 3)
			for _, from := range []int{0, 4, 8} { // batches 0-3, 4-7, 8-9
				if p := r.produceLeader("sized", acksAll, simpleBatch(vals("s", from, min(from+4, 10))...)); p.code != 0 || p.base != int64(from) {
					r.Fatalf("%s: sized: %v", r.tg.Name(), p)
				}
			}
			// Below 5: the first batch wholly, the second in part.
			if got := r.deleteRecords("sized", 5); got != "low watermark 5" {
				r.Fatalf("%s: DeleteRecords: %s", r.tg.Name(), got)
			}
		}, req: func(*corpusEnv) kmsg.Request { return describeLogDirsReq(ld, "sized", 0) }},
	}
}
