"""The environments of Section 6 (CartPole, Swimmer) behind one ``EnvSpec``, their registry and replays."""
