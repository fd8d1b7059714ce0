"""Kipf & Welling's graph convolutional network as pygcn writes it (layers.py, models.py,
utils.py, train.py), written again for a port test: only the imports are tracegrad's.

Same structure and ops: a `GraphConvolution` module whose weight and bias are
`Parameter(torch.FloatTensor(in, out))` filled by `reset_parameters` with
`.data.uniform_(-stdv, stdv)`, `torch.mm` then `torch.spmm` with the adjacency, a
`register_parameter('bias', None)` branch and a custom `__repr__`; the two-layer model
with ReLU, `F.dropout(training=self.training)` and `log_softmax`; `accuracy` through
`output.max(1)[1].type_as(labels)`, `.eq(labels).double()`, `.sum()` and `/ len(labels)`;
`F.nll_loss` on `output[idx_train]`, Adam with weight decay, the `'{:.4f}'.format(...)`
log lines and the final test pass.  A random graph from NumPy stands in for Cora, and the
adjacency is a dense, row-normalised matrix (pygcn keeps it as a sparse tensor; tracegrad
has dense tensors only, and `torch.spmm` takes a dense left operand too).
"""
import math
import time

import numpy as np

import tracegrad as torch
import tracegrad.nn as nn
import tracegrad.nn.functional as F
import tracegrad.optim as optim
from tracegrad.nn.modules.module import Module
from tracegrad.nn.parameter import Parameter


class GraphConvolution(Module):
    """Simple GCN layer, similar to https://arxiv.org/abs/1609.02907"""

    def __init__(self, in_features, out_features, bias=True):
        super(GraphConvolution, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(torch.FloatTensor(in_features, out_features))
        if bias:
            self.bias = Parameter(torch.FloatTensor(out_features))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1. / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)
        if self.bias is not None:
            self.bias.data.uniform_(-stdv, stdv)

    def forward(self, input, adj):
        support = torch.mm(input, self.weight)
        output = torch.spmm(adj, support)
        if self.bias is not None:
            return output + self.bias
        else:
            return output

    def __repr__(self):
        return self.__class__.__name__ + ' (' \
            + str(self.in_features) + ' -> ' \
            + str(self.out_features) + ')'


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout):
        super(GCN, self).__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        x = self.gc2(x, adj)
        return F.log_softmax(x, dim=1)


def normalize(mx):
    """Row-normalize matrix"""
    rowsum = np.array(mx.sum(1))
    r_inv = np.power(rowsum, -1).flatten()
    r_inv[np.isinf(r_inv)] = 0.
    return np.diag(r_inv).dot(mx)


def accuracy(output, labels):
    preds = output.max(1)[1].type_as(labels)
    correct = preds.eq(labels).double()
    correct = correct.sum()
    return correct / len(labels)


def load_data(n_nodes=40, n_feat=12, n_class=3, seed=11):
    """A random graph: nodes of one class link more often; binary bag-of-words features."""
    rng = np.random.default_rng(seed)
    classes = rng.integers(0, n_class, n_nodes)
    labels_onehot = np.eye(n_class)[classes]
    features = (rng.uniform(size=(n_nodes, n_feat)) < 0.3).astype(np.float32)
    features[np.arange(n_nodes), classes] = 1.0       # a word that gives the class away
    same = classes[:, None] == classes[None, :]
    adj = (rng.uniform(size=(n_nodes, n_nodes)) < np.where(same, 0.25, 0.04))
    adj = np.triu(adj, 1)
    adj = (adj + adj.T).astype(np.float32)           # build symmetric adjacency matrix
    features = normalize(features)
    adj = normalize(adj + np.eye(adj.shape[0]))
    idx_train = range(n_nodes // 2)
    idx_val = range(n_nodes // 2, 3 * n_nodes // 4)
    idx_test = range(3 * n_nodes // 4, n_nodes)
    adj = torch.FloatTensor(np.array(adj))
    features = torch.FloatTensor(np.array(features))
    labels = torch.LongTensor(np.where(labels_onehot)[1])
    idx_train = torch.LongTensor(idx_train)
    idx_val = torch.LongTensor(idx_val)
    idx_test = torch.LongTensor(idx_test)
    return adj, features, labels, idx_train, idx_val, idx_test


def main(epochs=200, hidden=16, dropout=0.5, lr=0.01, weight_decay=5e-4, fastmode=False,
         seed=42, init=None, log=print):
    """Per epoch: train loss and accuracy, validation loss and accuracy; then the test
    loss and accuracy and the model's repr."""
    np.random.seed(seed)
    torch.manual_seed(seed)
    adj, features, labels, idx_train, idx_val, idx_test = load_data()
    model = GCN(nfeat=features.shape[1], nhid=hidden, nclass=labels.max().item() + 1,
                dropout=dropout)
    if init is not None:
        init(model)
    optimizer = optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    record = []

    def train(epoch):
        t = time.time()
        model.train()
        optimizer.zero_grad()
        output = model(features, adj)
        loss_train = F.nll_loss(output[idx_train], labels[idx_train])
        acc_train = accuracy(output[idx_train], labels[idx_train])
        loss_train.backward()
        optimizer.step()

        if not fastmode:
            # Evaluate validation set performance separately,
            # deactivates dropout during validation run.
            model.eval()
            output = model(features, adj)

        loss_val = F.nll_loss(output[idx_val], labels[idx_val])
        acc_val = accuracy(output[idx_val], labels[idx_val])
        log('Epoch: {:04d}'.format(epoch + 1),
            'loss_train: {:.4f}'.format(loss_train.item()),
            'acc_train: {:.4f}'.format(acc_train.item()),
            'loss_val: {:.4f}'.format(loss_val.item()),
            'acc_val: {:.4f}'.format(acc_val.item()),
            'time: {:.4f}s'.format(time.time() - t))
        record.extend([loss_train.item(), acc_train.item(), loss_val.item(), acc_val.item()])

    def test():
        model.eval()
        output = model(features, adj)
        loss_test = F.nll_loss(output[idx_test], labels[idx_test])
        acc_test = accuracy(output[idx_test], labels[idx_test])
        log("Test set results:",
            "loss= {:.4f}".format(loss_test.item()),
            "accuracy= {:.4f}".format(acc_test.item()))
        record.extend([loss_test.item(), acc_test.item()])

    # Train model
    t_total = time.time()
    for epoch in range(epochs):
        train(epoch)
    log("Optimization Finished!")
    log("Total time elapsed: {:.4f}s".format(time.time() - t_total))

    # Testing
    test()
    return record, repr(model)
