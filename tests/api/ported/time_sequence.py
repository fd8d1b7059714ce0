"""pytorch/examples' time_sequence_prediction (generate_sine_wave.py + train.py), written
again for a port test: only the imports are tracegrad's.

Same structure and ops: sine waves with random phase saved with `torch.save` and read back
with `torch.load`, two stacked `LSTMCell`s in float64 (`model.double()`) stepped over
`input.split(1, dim=1)`, a `Linear` read-out, `torch.cat` of the outputs, and the
"future" loop that feeds predictions back in; `MSELoss` minimised by `LBFGS` through a
closure that prints and returns the loss; the test prediction under `torch.no_grad()`
with `.detach().numpy()`.  Shapes are shrunk (hidden 51 -> `hidden`, waves of 1000 -> `L`
points) so a test runs in seconds.
"""
import os
import tempfile

import numpy as np

import tracegrad as torch
import tracegrad.nn as nn
import tracegrad.optim as optim


def generate_sine_wave(path, T=20, L=1000, N=100, seed=2):
    np.random.seed(seed)
    x = np.empty((N, L), 'int64')
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    data = np.sin(x / 1.0 / T).astype('float64')
    torch.save(data, open(path, 'wb'))


class Sequence(nn.Module):
    def __init__(self, hidden=51):
        super(Sequence, self).__init__()
        self.hidden = hidden
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        c_t = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), self.hidden, dtype=torch.double)

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):  # if we should predict the future
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


def train(steps=15, hidden=51, L=1000, N=100, future=1000, max_iter=20, init=None,
          compiled=False, log=print):
    """Every closure's loss and each step's test loss, then the last prediction's sum."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'traindata.pt')
        generate_sine_wave(path, L=L, N=N)
        # set random seed to 0
        np.random.seed(0)
        torch.manual_seed(0)
        # load data and make training set
        data = torch.load(path, weights_only=False)
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])
    # build the model
    seq = Sequence(hidden)
    if init is not None:
        init(seq)
    seq.double()
    criterion = nn.MSELoss()
    # use LBFGS as optimizer since we can load the whole data to train
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=max_iter)
    losses = []

    def forward_backward(input, target):
        optimizer.zero_grad()
        out = seq(input)
        loss = criterion(out, target)
        loss.backward()
        return loss

    if compiled:
        forward_backward = torch.compile(forward_backward)
    # begin to train
    for i in range(steps):
        log('STEP: ', i)

        def closure():
            loss = forward_backward(input, target)
            log('loss:', loss.item())
            losses.append(loss.item())
            return loss
        optimizer.step(closure)
        # begin to predict, no need to track gradient here
        with torch.no_grad():
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            log('test loss:', loss.item())
            losses.append(loss.item())
            y = pred.detach().numpy()
    return losses + [float(y.sum())]
