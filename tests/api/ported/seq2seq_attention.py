"""The PyTorch tutorial "NLP From Scratch: Translation with a Sequence to Sequence Network
and Attention", written again for a port test (imports changed to tracegrad).

Same structure and ops: a GRU encoder over embedded source words, a decoder with
Bahdanau (additive) attention (`bmm` of the weights with the encoder outputs, `cat` with
the embedded input, a GRU step, a linear layer and log-softmax), teacher forcing on the
target, greedy `topk(1)` otherwise, NLLLoss over the flattened outputs, two Adam
optimizers.  Synthetic sentence pairs stand in for the tutorial's English-French data.
"""
import tracegrad as torch
import tracegrad.nn as nn
import tracegrad.nn.functional as F
from tracegrad import optim
from tracegrad.utils.data import DataLoader, TensorDataset

SOS_token = 0
EOS_token = 1


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.1):
        super(EncoderRNN, self).__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        output, hidden = self.gru(embedded)
        return output, hidden


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super(BahdanauAttention, self).__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)
        return context, weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, max_length, dropout_p=0.1):
        super(AttnDecoderRNN, self).__init__()
        self.max_length = max_length
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs = []
        attentions = []

        for i in range(self.max_length):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(
                decoder_input, decoder_hidden, encoder_outputs)
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)

            if target_tensor is not None:
                decoder_input = target_tensor[:, i].unsqueeze(1)  # teacher forcing
            else:
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()

        decoder_outputs = torch.cat(decoder_outputs, dim=1)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
        attentions = torch.cat(attentions, dim=1)
        return decoder_outputs, decoder_hidden, attentions

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(input))
        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs)
        input_gru = torch.cat((embedded, context), dim=2)
        output, hidden = self.gru(input_gru, hidden)
        output = self.out(output)
        return output, hidden, attn_weights


def make_step(encoder, decoder, encoder_optimizer, decoder_optimizer, criterion):
    def step(input_tensor, target_tensor):
        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)
        loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)),
                         target_tensor.view(-1))
        loss.backward()
        encoder_optimizer.step()
        decoder_optimizer.step()
        return loss.detach()
    return step


def greedy_decode(encoder, decoder, input_tensor):
    """Evaluation as the tutorial's `evaluate`: no target, greedy topk(1) decoding."""
    with torch.no_grad():
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, _, attentions = decoder(encoder_outputs, encoder_hidden)
        _, topi = decoder_outputs.topk(1)
        return topi.squeeze(-1), attentions


def train(pairs, n_words, steps, hidden_size=16, batch_size=4, init=None, compiled=False,
          dropout_p=0.0, lr=0.001):
    """Losses of the first `steps` steps over `pairs` (int64 arrays (N, L) source/target,
    EOS-terminated); batches in order (the tutorial shuffles with RandomSampler, whose
    order is each library's own random stream)."""
    max_length = pairs[0].shape[1]
    encoder = EncoderRNN(n_words, hidden_size, dropout_p)
    decoder = AttnDecoderRNN(hidden_size, n_words, max_length, dropout_p)
    if init is not None:
        init(encoder)
        init(decoder)
    data = TensorDataset(torch.LongTensor(pairs[0]), torch.LongTensor(pairs[1]))
    loader = DataLoader(data, batch_size=batch_size, drop_last=True)
    step = make_step(encoder, decoder, optim.Adam(encoder.parameters(), lr=lr),
                     optim.Adam(decoder.parameters(), lr=lr), nn.NLLLoss())
    if compiled:
        step = torch.compile(step)
    losses = []
    for input_tensor, target_tensor in loader:
        losses.append(step(input_tensor, target_tensor).item())
        if len(losses) == steps:
            break
    decoded, attentions = greedy_decode(encoder, decoder, data[:2][0])
    return losses, decoded.tolist(), attentions.sum().item()
