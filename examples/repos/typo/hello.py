print('Helo, world')
