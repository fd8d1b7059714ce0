"""pytorch/examples' fast_neural_style: TransformerNet and its training losses, written
again for a port test (imports changed to tracegrad).

TransformerNet as in the original: reflection-padded convolutions with affine instance
norm, five residual blocks, nearest-upsampling convolutions, ReLU.  The original scores
content and style with a pretrained VGG16; torchvision is not a dependency, so
`FeatureNet` is a small frozen convolution stack standing in for it (same use: feature
maps, MSE content loss, Gram-matrix style loss with `bmm`).  `width` scales the
channel counts (32/64/128 in the original).
"""
import tracegrad as torch
import tracegrad.nn as nn


class ConvLayer(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        reflection_padding = kernel_size // 2
        self.reflection_pad = nn.ReflectionPad2d(reflection_padding)
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        return self.conv2d(self.reflection_pad(x))


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super(ResidualBlock, self).__init__()
        self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in1 = nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in2 = nn.InstanceNorm2d(channels, affine=True)
        self.relu = nn.ReLU()

    def forward(self, x):
        residual = x
        out = self.relu(self.in1(self.conv1(x)))
        out = self.in2(self.conv2(out))
        return out + residual


class UpsampleConvLayer(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super(UpsampleConvLayer, self).__init__()
        self.upsample = upsample
        self.reflection_pad = nn.ReflectionPad2d(kernel_size // 2)
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        if self.upsample:
            x = torch.nn.functional.interpolate(x, mode="nearest", scale_factor=self.upsample)
        return self.conv2d(self.reflection_pad(x))


class TransformerNet(nn.Module):
    def __init__(self, width=32):
        super(TransformerNet, self).__init__()
        a, b, c = width, 2 * width, 4 * width
        self.conv1 = ConvLayer(3, a, kernel_size=9, stride=1)
        self.in1 = nn.InstanceNorm2d(a, affine=True)
        self.conv2 = ConvLayer(a, b, kernel_size=3, stride=2)
        self.in2 = nn.InstanceNorm2d(b, affine=True)
        self.conv3 = ConvLayer(b, c, kernel_size=3, stride=2)
        self.in3 = nn.InstanceNorm2d(c, affine=True)
        self.res1 = ResidualBlock(c)
        self.res2 = ResidualBlock(c)
        self.res3 = ResidualBlock(c)
        self.res4 = ResidualBlock(c)
        self.res5 = ResidualBlock(c)
        self.deconv1 = UpsampleConvLayer(c, b, kernel_size=3, stride=1, upsample=2)
        self.in4 = nn.InstanceNorm2d(b, affine=True)
        self.deconv2 = UpsampleConvLayer(b, a, kernel_size=3, stride=1, upsample=2)
        self.in5 = nn.InstanceNorm2d(a, affine=True)
        self.deconv3 = ConvLayer(a, 3, kernel_size=9, stride=1)
        self.relu = torch.nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.relu(self.in3(self.conv3(y)))
        y = self.res1(y)
        y = self.res2(y)
        y = self.res3(y)
        y = self.res4(y)
        y = self.res5(y)
        y = self.relu(self.in4(self.deconv1(y)))
        y = self.relu(self.in5(self.deconv2(y)))
        y = self.deconv3(y)
        return y


class FeatureNet(nn.Module):
    """Frozen stand-in for VGG16's relu1_2 .. relu4_3: returns four feature maps."""

    def __init__(self, width=8):
        super().__init__()
        self.slices = nn.ModuleList([
            nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.ReLU(inplace=True)),
            nn.Sequential(nn.MaxPool2d(2, 2), nn.Conv2d(width, 2 * width, 3, padding=1),
                          nn.ReLU(inplace=True)),
            nn.Sequential(nn.MaxPool2d(2, 2), nn.Conv2d(2 * width, 2 * width, 3, padding=1),
                          nn.ReLU(inplace=True)),
            nn.Sequential(nn.Conv2d(2 * width, 2 * width, 3, padding=1), nn.ReLU(inplace=True))])
        for param in self.parameters():
            param.requires_grad = False

    def forward(self, x):
        outs = []
        for s in self.slices:
            x = s(x)
            outs.append(x)
        return outs


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    gram = features.bmm(features_t) / (ch * h * w)
    return gram


def normalize_batch(batch):
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std


def make_step(transformer, vgg, optimizer, gram_style, content_weight=1e5, style_weight=1e10):
    mse_loss = torch.nn.MSELoss()

    def step(x):
        n_batch = len(x)
        optimizer.zero_grad()
        y = transformer(x)
        y = normalize_batch(y)
        x = normalize_batch(x)
        features_y = vgg(y)
        features_x = vgg(x)
        content_loss = content_weight * mse_loss(features_y[1], features_x[1])
        style_loss = 0.
        for ft_y, gm_s in zip(features_y, gram_style):
            gm_y = gram_matrix(ft_y)
            style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
        style_loss *= style_weight
        total_loss = content_loss + style_loss
        total_loss.backward()
        optimizer.step()
        return total_loss.detach()
    return step


def train(images, style, steps, width=4, init=None, compiled=False, lr=1e-3, dtype="float32"):
    """Losses of the first `steps` Adam steps on `images` (steps, B, 3, H, W), 0..255.

    `dtype` "float64" is what the port test uses: in float32, torch's CPU instance norm of
    conv1's output (mean >> spread) loses ~5% of the gradient to cancellation (measured
    against float64; tracegrad's float32 stays within 1e-5 of it), so float32 losses of
    the two libraries part after the first Adam step."""
    transformer = TransformerNet(width)
    vgg = FeatureNet()
    if init is not None:
        init(transformer)
        init(vgg)
    transformer.to(getattr(torch, dtype))
    vgg.to(getattr(torch, dtype))
    images, style = images.astype(dtype), style.astype(dtype)
    optimizer = torch.optim.Adam(transformer.parameters(), lr)
    style = torch.from_numpy(style).repeat(images.shape[1], 1, 1, 1)
    features_style = vgg(normalize_batch(style))
    gram_style = [gram_matrix(y) for y in features_style]
    step = make_step(transformer, vgg, optimizer, gram_style, 1e1, 1e5)
    if compiled:
        step = torch.compile(step)
    return [step(torch.from_numpy(images[i]).clone()).item() for i in range(steps)]
