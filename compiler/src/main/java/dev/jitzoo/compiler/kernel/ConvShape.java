package dev.jitzoo.compiler.kernel;

import java.util.List;

/**
 * A convolution's extents by name, read once from its op: the input {@code [n, channels, height,
 * width]}, the filters {@code [outChannels, groupChannels, kernelH, kernelW]}, the output
 * {@code [n, outChannels, outH, outW]}, and per group the channels in and out and the taps of one
 * output ({@code groupChannels · kernelH · kernelW}).
 */
public record ConvShape(int n, int channels, int height, int width, int outChannels, int kernelH, int kernelW,
                        int outH, int outW, int groupChannels, int groupOutChannels, int taps, ConvWindow window) {

    public static ConvShape of(Op op) {
        List<Integer> d = op.dims();
        ConvWindow w = op.window();
        int groupChannels = d.get(1) / w.group();
        return new ConvShape(d.get(0), d.get(1), d.get(2), d.get(3), d.get(4), d.get(5), d.get(6), op.outputHeight(), op.outputWidth(),
                groupChannels, d.get(4) / w.group(), groupChannels * d.get(5) * d.get(6), w);
    }

    /** Floats of one input channel's plane. */
    public int plane() {
        return height * width;
    }

    /** Floats of one output channel's plane. */
    public int outPlane() {
        return outH * outW;
    }

    /** Floats of one image of the input. */
    public int image() {
        return channels * plane();
    }

    /** Floats of one image of the output. */
    public int outImage() {
        return outChannels * outPlane();
    }
}
