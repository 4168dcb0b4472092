# Copyright (c) 2017 Pytorch contributors. All rights reserved.
# BSD 3-Clause License: the full text (conditions and disclaimer) is tests/examples/LICENSE.
# Source: pytorch/examples, language_translation/src/data.py at commit 77f55b912142.
# Changes: get_data's data: torchtext's Multi30k download, spacy tokenizers
# and build_vocab_from_iterator are not available (no network, no torchtext): a synthetic parallel corpus
# (the target sentence is the source one word for word through a fixed dictionary), split on spaces, and
# a small vocabulary class with torchtext's calls. The pipeline from the tokens on (_seq_transform,
# _tensor_transform, _collate_fn with pad_sequence, the DataLoaders) and the masks are the original's.
import random

import tritensor as torch
from tritensor.nn.utils.rnn import pad_sequence
from tritensor.utils.data import DataLoader

SRC_WORDS = ["ein", "mann", "hund", "frau", "läuft", "springt", "im", "park", "schnell", "rot"]
TGT_WORDS = ["a", "man", "dog", "woman", "runs", "jumps", "in", "park", "quickly", "red"]


class _Vocab:
    """torchtext.vocab.Vocab's calls used by the example: tokens -> ids, lookup_tokens, len."""

    def __init__(self, specials, words):
        self.itos = list(specials) + list(words)
        self.stoi = {w: i for i, w in enumerate(self.itos)}
        self.default = None

    def set_default_index(self, index):
        self.default = index

    def __call__(self, tokens):
        return [self.stoi.get(t, self.default) for t in tokens]

    def __len__(self):
        return len(self.itos)

    def lookup_tokens(self, ids):
        return [self.itos[i] for i in ids]


def _corpus(count, seed):
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        idx = [rng.randrange(len(SRC_WORDS)) for _ in range(rng.randint(3, 7))]
        pairs.append((" ".join(SRC_WORDS[i] for i in idx) + "\n", " ".join(TGT_WORDS[i] for i in idx) + "\n"))
    return pairs


def get_data(opts):

    special_symbols = {
        "<unk>":0,
        "<pad>":1,
        "<bos>":2,
        "<eos>":3
    }

    train_iterator = _corpus(64, seed=0)
    valid_iterator = _corpus(16, seed=1)

    src_tokenizer = tgt_tokenizer = str.split

    src_vocab = _Vocab(special_symbols, SRC_WORDS)
    tgt_vocab = _Vocab(special_symbols, TGT_WORDS)

    src_vocab.set_default_index(special_symbols["<unk>"])
    tgt_vocab.set_default_index(special_symbols["<unk>"])

    # Helper function to sequentially apply transformations
    def _seq_transform(*transforms):
        def func(txt_input):
            for transform in transforms:
                txt_input = transform(txt_input)
            return txt_input
        return func

    # Function to add BOS/EOS and create tensor for input sequence indices
    def _tensor_transform(token_ids):
        return torch.cat(
            (torch.tensor([special_symbols["<bos>"]]),
             torch.tensor(token_ids),
             torch.tensor([special_symbols["<eos>"]]))
        )

    src_lang_transform = _seq_transform(src_tokenizer, src_vocab, _tensor_transform)
    tgt_lang_transform = _seq_transform(tgt_tokenizer, tgt_vocab, _tensor_transform)

    # Now we want to convert the torchtext data pipeline to a dataloader. We
    # will need to collate batches
    def _collate_fn(batch):
        src_batch, tgt_batch = [], []
        for src_sample, tgt_sample in batch:
            src_batch.append(src_lang_transform(src_sample.rstrip("\n")))
            tgt_batch.append(tgt_lang_transform(tgt_sample.rstrip("\n")))

        src_batch = pad_sequence(src_batch, padding_value=special_symbols["<pad>"])
        tgt_batch = pad_sequence(tgt_batch, padding_value=special_symbols["<pad>"])
        return src_batch, tgt_batch

    # Create the dataloader
    train_dataloader = DataLoader(train_iterator, batch_size=opts.batch, collate_fn=_collate_fn)
    valid_dataloader = DataLoader(valid_iterator, batch_size=opts.batch, collate_fn=_collate_fn)

    return train_dataloader, valid_dataloader, src_vocab, tgt_vocab, src_lang_transform, tgt_lang_transform, special_symbols

def generate_square_subsequent_mask(size, device):
    mask = (torch.triu(torch.ones((size, size), device=device)) == 1).transpose(0, 1)
    mask = mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))
    return mask

# Create masks for input into model
def create_mask(src, tgt, pad_idx, device):

    # Get sequence length
    src_seq_len = src.shape[0]
    tgt_seq_len = tgt.shape[0]

    # Generate the mask
    tgt_mask = generate_square_subsequent_mask(tgt_seq_len, device)
    src_mask = torch.zeros((src_seq_len, src_seq_len),device=device).type(torch.bool)

    # Overlay the mask over the original input
    src_padding_mask = (src == pad_idx).transpose(0, 1)
    tgt_padding_mask = (tgt == pad_idx).transpose(0, 1)
    return src_mask, tgt_mask, src_padding_mask, tgt_padding_mask

