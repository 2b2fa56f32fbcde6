package dev.jitzoo.proto.records;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.proto.zoo.v1.KernelReportBatch;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReportRecordsTest {

    private static final DeviceProfile DEVICE = DeviceProfile.newBuilder().setFingerprint("fp-1").setLogicalCores(8).build();

    private static KernelReport report(String session, long at) {
        return KernelReport.newBuilder().setSessionId(session).setReceivedAtMs(at).setTenant("public").build();
    }

    @Test
    void aBatchIsReadBackAsItsReportsEachWithTheDevice() throws InvalidProtocolBufferException {
        List<KernelReport> sent = List.of(report("s", 1), report("s", 2).toBuilder().setDevice(DEVICE).build(), report("s", 3));

        byte[] value = ReportRecords.encode(DEVICE, sent);

        KernelReportBatch batch = KernelReportBatch.parseFrom(value);
        assertEquals(3, batch.getReportsCount());
        assertEquals(0, batch.getReportsList().stream().filter(KernelReport::hasDevice).count(), "the device is written once, in the batch");
        assertEquals(sent.stream().map(r -> r.toBuilder().setDevice(DEVICE).build()).toList(), ReportRecords.decode(value));
    }

    @Test
    void aReportAloneIsReadAsOne() throws InvalidProtocolBufferException {
        KernelReport alone = report("s", 7).toBuilder().setDevice(DEVICE).build();

        assertEquals(List.of(alone), ReportRecords.decode(alone.toByteArray()));
    }

    @Test
    void garbageIsRefused() {
        assertThrows(InvalidProtocolBufferException.class, () -> ReportRecords.decode(new byte[] {(byte) 0xff, (byte) 0xff, 0x01}));
    }
}
