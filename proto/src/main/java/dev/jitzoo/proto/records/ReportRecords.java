package dev.jitzoo.proto.records;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.proto.zoo.v1.KernelReportBatch;
import java.util.ArrayList;
import java.util.List;

/**
 * The value of a {@code kernel-reports} record: a {@link KernelReportBatch} (the reports of one
 * session, as the gateway writes them, their device once in the batch) or a {@link KernelReport}
 * alone (as dead-letter replays, benches and gateways before batches write them). Both are read
 * back as whole reports, each with its device.
 */
public final class ReportRecords {

    private ReportRecords() {
    }

    /** One session's reports in one record: each report's device, which must be {@code device} or unset, is left to the batch. */
    public static byte[] encode(DeviceProfile device, List<KernelReport> reports) {
        KernelReportBatch.Builder batch = KernelReportBatch.newBuilder().setDevice(device);
        for (KernelReport report : reports) {
            batch.addReports(report.hasDevice() ? report.toBuilder().clearDevice().build() : report);
        }
        return batch.build().toByteArray();
    }

    /** The reports a record carries, each with its device; at least one. */
    public static List<KernelReport> decode(byte[] value) throws InvalidProtocolBufferException {
        KernelReportBatch batch = KernelReportBatch.parseFrom(value);
        if (batch.getReportsCount() == 0) {
            return List.of(KernelReport.parseFrom(value));
        }
        List<KernelReport> reports = new ArrayList<>(batch.getReportsCount());
        for (KernelReport report : batch.getReportsList()) {
            reports.add(report.hasDevice() ? report : report.toBuilder().setDevice(batch.getDevice()).build());
        }
        return reports;
    }
}
