"""pytorch/examples' vae/main.py (Kingma & Welling's VAE on MNIST), written again for a
port test: only the imports are tracegrad's.

Same structure and ops: `fc1` -> ReLU -> (`fc21`, `fc22`) for mu and log-variance,
`reparameterize` with `torch.randn_like`, `fc3` -> ReLU -> `fc4` -> `torch.sigmoid`,
`x.view(-1, 784)`, the loss `F.binary_cross_entropy(..., reduction='sum')` plus the KL
term, Adam, a `DataLoader` over a `TensorDataset`, the per-batch and per-epoch logging
(`loss.item() / len(data)`, `len(train_loader.dataset)`), the test pass under
`torch.no_grad()` that builds the comparison grid with `torch.cat` and `view(..., 1, 28,
28)`, and decoding `torch.randn(64, 20)` samples.  Random 8x8 "digits" replace MNIST
(784 -> `side` ** 2, 400 -> `hidden`, 20 -> `latent`).

`noise` (a function of a shape giving a NumPy array) still draws ``torch.randn_like(std)`` but then
copies a NumPy draw into it, so torch and tracegrad (whose random streams differ) see the
same eps and their losses can be compared step by step.
"""
import tracegrad as torch
import tracegrad.utils.data
from tracegrad import nn, optim
from tracegrad.nn import functional as F


class VAE(nn.Module):
    def __init__(self, pixels=784, hidden=400, latent=20, noise=None):
        super(VAE, self).__init__()
        self.pixels = pixels
        self.noise = noise
        self.fc1 = nn.Linear(pixels, hidden)
        self.fc21 = nn.Linear(hidden, latent)
        self.fc22 = nn.Linear(hidden, latent)
        self.fc3 = nn.Linear(latent, hidden)
        self.fc4 = nn.Linear(hidden, pixels)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        if self.noise is not None:
            eps.copy_(torch.from_numpy(self.noise(tuple(std.shape))))
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, self.pixels))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar, pixels=784):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, pixels), reduction='sum')

    # see Appendix B from VAE paper:
    # Kingma and Welling. Auto-Encoding Variational Bayes. ICLR, 2014
    # https://arxiv.org/abs/1312.6114
    # 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())

    return BCE + KLD


def main(train_images, test_images, noise, epochs=1, batch_size=4, side=28, hidden=400,
         latent=20, init=None, log_interval=1, log=print, compiled=False):
    """Per-batch train losses, per-epoch averages and test losses, then the sum of the
    comparison grid and of 64 decoded samples (their z from `noise` too)."""
    use_cuda = torch.cuda.is_available()
    torch.manual_seed(1)
    device = torch.device("cuda" if use_cuda else "cpu")
    kwargs = {'num_workers': 1, 'pin_memory': True} if use_cuda else {}
    labels = torch.zeros(len(train_images), dtype=torch.long)
    train_loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.from_numpy(train_images), labels),
        batch_size=batch_size, shuffle=False, **kwargs)
    test_loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.from_numpy(test_images),
                                       torch.zeros(len(test_images), dtype=torch.long)),
        batch_size=batch_size, shuffle=False, **kwargs)

    model = VAE(side * side, hidden, latent, noise).to(device)
    if init is not None:
        init(model)
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    record = []

    def train_step(data):
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar, side * side)
        loss.backward()
        optimizer.step()
        return loss

    if compiled:
        train_step = torch.compile(train_step)

    def train(epoch):
        model.train()
        train_loss = 0
        for batch_idx, (data, _) in enumerate(train_loader):
            data = data.to(device)
            loss = train_step(data)
            train_loss += loss.item()
            record.append(loss.item() / len(data))
            if batch_idx % log_interval == 0:
                log('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                    epoch, batch_idx * len(data), len(train_loader.dataset),
                    100. * batch_idx / len(train_loader),
                    loss.item() / len(data)))
        log('====> Epoch: {} Average loss: {:.4f}'.format(
            epoch, train_loss / len(train_loader.dataset)))
        record.append(train_loss / len(train_loader.dataset))

    def test(epoch):
        model.eval()
        test_loss = 0
        with torch.no_grad():
            for i, (data, _) in enumerate(test_loader):
                data = data.to(device)
                recon_batch, mu, logvar = model(data)
                test_loss += loss_function(recon_batch, data, mu, logvar, side * side).item()
                if i == 0:
                    n = min(data.size(0), 8)
                    comparison = torch.cat([data[:n],
                                            recon_batch.view(batch_size, 1, side, side)[:n]])
                    record.append(comparison.sum().item())
        test_loss /= len(test_loader.dataset)
        log('====> Test set loss: {:.4f}'.format(test_loss))
        record.append(test_loss)

    for epoch in range(1, epochs + 1):
        train(epoch)
        test(epoch)
        with torch.no_grad():
            sample = torch.randn(64, latent).to(device)
            sample.copy_(torch.from_numpy(noise((64, latent))))
            sample = model.decode(sample).cpu()
            record.append(sample.view(64, 1, side, side).sum().item())
    return record
