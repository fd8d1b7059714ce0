"""A Vision Transformer (Dosovitskiy et al., 2020) as it is commonly written in PyTorch
(a `Conv2d` patch embedding, a class token and learned position embeddings, torch's
`nn.TransformerEncoder` with pre-norm GELU layers, a LayerNorm + Linear head), trained
with AdamW (decay only on matrices), linear warm-up then cosine decay (`SequentialLR`),
label smoothing and gradient clipping, from a `Dataset` through a `DataLoader`.
Written for a port test: only the imports are tracegrad's.
"""
import math

import tracegrad as torch
import tracegrad.nn as nn
import tracegrad.nn.functional as F
from tracegrad.optim.lr_scheduler import CosineAnnealingLR, LinearLR, SequentialLR
from tracegrad.utils.data import DataLoader, Dataset


class PatchEmbed(nn.Module):
    def __init__(self, img_size, patch_size, in_chans, embed_dim):
        super().__init__()
        self.num_patches = (img_size // patch_size) ** 2
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)     # (B, N, D)


class ViT(nn.Module):
    def __init__(self, img_size=16, patch_size=4, in_chans=3, num_classes=5, dim=32, depth=2,
                 heads=4, mlp_ratio=2.0, dropout=0.0):
        super().__init__()
        self.patch_embed = PatchEmbed(img_size, patch_size, in_chans, dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, self.patch_embed.num_patches + 1, dim))
        self.pos_drop = nn.Dropout(p=dropout)
        layer = nn.TransformerEncoderLayer(dim, heads, int(dim * mlp_ratio), dropout,
                                           activation="gelu", batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.trunc_normal_(self.cls_token, std=0.02)
        self.apply(self._init_weights)

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.patch_embed(x)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat((cls, x), dim=1) + self.pos_embed
        x = self.encoder(self.pos_drop(x))
        return self.head(self.norm(x)[:, 0])

    def configure_optimizers(self, lr, weight_decay):
        decay = [p for n, p in self.named_parameters() if p.dim() >= 2 and "embed" not in n]
        no_decay = [p for n, p in self.named_parameters() if p.dim() < 2 or "embed" in n]
        groups = [{"params": decay, "weight_decay": weight_decay},
                  {"params": no_decay, "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.999))


class ImageDataset(Dataset):
    """(image, label) pairs from arrays; labels as Python ints (default collate stacks)."""

    def __init__(self, images, labels):
        self.images, self.labels = images, labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return torch.from_numpy(self.images[i]), int(self.labels[i])


def make_step(model, optimizer, criterion, clip=1.0):
    def step(x, y):
        model.train()
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        return loss.detach()
    return step


def train(images, labels, steps, init=None, compiled=False, lr=3e-3, batch_size=4):
    """Losses of the first `steps` steps, then eval accuracy and the final learning rate."""
    torch.manual_seed(0)
    model = ViT()
    if init is not None:
        init(model)
    optimizer = model.configure_optimizers(lr, 0.05)
    warmup = LinearLR(optimizer, start_factor=0.1, total_iters=2)
    cosine = CosineAnnealingLR(optimizer, T_max=max(steps - 2, 1), eta_min=lr / 10)
    scheduler = SequentialLR(optimizer, [warmup, cosine], milestones=[2])
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    step = make_step(model, optimizer, criterion)
    if compiled:
        step = torch.compile(step)
    loader = DataLoader(ImageDataset(images, labels), batch_size=batch_size, shuffle=False)
    losses = []
    for x, y in loader:
        losses.append(step(x, y).item())
        scheduler.step()    # outside the step: tg.compile reads the new lr as data
        if len(losses) == steps:
            break
    model.eval()
    with torch.no_grad():
        x = torch.from_numpy(images)
        pred = model(x).argmax(dim=-1)
        acc = (pred == torch.from_numpy(labels)).float().mean().item()
        probs = F.softmax(model(x), dim=-1).max().item()
    return losses, acc, probs, optimizer.param_groups[0]["lr"] / lr * math.pi
