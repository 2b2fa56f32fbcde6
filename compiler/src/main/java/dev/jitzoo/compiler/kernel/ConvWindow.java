package dev.jitzoo.compiler.kernel;

/**
 * How a convolution's window slides over its input's H and W ({@code OpSpec.conv}): strides,
 * dilations, zeros padded before and after each axis, and the groups its channels split into.
 * Values as they take effect (a stride, dilation or group of at least 1), so one window has one form.
 */
public record ConvWindow(int strideH, int strideW, int dilationH, int dilationW,
                         int padTop, int padLeft, int padBottom, int padRight, int group) {

    /** Strides 1, no dilation, no pads, one group. */
    public static final ConvWindow PLAIN = new ConvWindow(1, 1, 1, 1, 0, 0, 0, 0, 1);

    /** The window of a wire op, defaults spelled out. */
    public static ConvWindow of(dev.jitzoo.proto.kernel.v1.ConvWindow w) {
        return new ConvWindow(Math.max(1, w.getStrideH()), Math.max(1, w.getStrideW()), Math.max(1, w.getDilationH()),
                Math.max(1, w.getDilationW()), w.getPadTop(), w.getPadLeft(), w.getPadBottom(), w.getPadRight(), Math.max(1, w.getGroup()));
    }

    /** The window on the wire. */
    public dev.jitzoo.proto.kernel.v1.ConvWindow wire() {
        return dev.jitzoo.proto.kernel.v1.ConvWindow.newBuilder().setStrideH(strideH).setStrideW(strideW)
                .setDilationH(dilationH).setDilationW(dilationW).setPadTop(padTop).setPadLeft(padLeft)
                .setPadBottom(padBottom).setPadRight(padRight).setGroup(group).build();
    }

    /** The same window with these strides. */
    public ConvWindow withStrides(int h, int w) {
        return new ConvWindow(h, w, dilationH, dilationW, padTop, padLeft, padBottom, padRight, group);
    }

    public ConvWindow withDilations(int h, int w) {
        return new ConvWindow(strideH, strideW, h, w, padTop, padLeft, padBottom, padRight, group);
    }

    /** Pads top, left, bottom, right. */
    public ConvWindow withPads(int top, int left, int bottom, int right) {
        return new ConvWindow(strideH, strideW, dilationH, dilationW, top, left, bottom, right, group);
    }

    public ConvWindow withGroup(int groups) {
        return new ConvWindow(strideH, strideW, dilationH, dilationW, padTop, padLeft, padBottom, padRight, groups);
    }

    @Override
    public String toString() {
        return "stride " + strideH + "x" + strideW + " dilation " + dilationH + "x" + dilationW
                + " pads " + padTop + "," + padLeft + "," + padBottom + "," + padRight + " group " + group;
    }
}
